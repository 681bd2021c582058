-- An account's deletion in progress (api/services/account.ts): DELETE /v1/account marks the user row and revokes
-- every key of the account in one transaction, the row locked, before it looks for the account's turns. A turn
-- created after that would be missed by the deletion, so create_queued_turn, which takes the same row lock
-- first, refuses the account from then on (`account_deleting`), before any other check: a request that was
-- authenticated just before the keys were revoked creates nothing. Otherwise the function is unchanged
-- (20261213100000_create_queued_turn_function).
ALTER TABLE "users" ADD COLUMN "deleting_since" TIMESTAMPTZ(3);

CREATE OR REPLACE FUNCTION create_queued_turn(
  p_user_id TEXT,
  p_turn_id TEXT,
  p_messages JSONB,
  p_context JSONB,
  p_cost_cap_reached BOOLEAN,
  p_max_in_flight INTEGER,
  p_window_seconds INTEGER,
  p_max_per_window INTEGER,
  p_key TEXT,
  p_request_hash TEXT,
  p_key_ttl_hours INTEGER
) RETURNS TABLE (
  outcome TEXT,
  in_flight INTEGER,
  retry_after INTEGER,
  id TEXT,
  user_id TEXT,
  status "TurnStatus",
  messages JSONB,
  context JSONB,
  result JSONB,
  error JSONB,
  created_at TIMESTAMPTZ,
  completed_at TIMESTAMPTZ,
  attempt INTEGER,
  previous_attempts JSONB,
  last_event_id INTEGER
)
LANGUAGE plpgsql
AS E'
#variable_conflict use_column
DECLARE
  v_hash TEXT\073
  v_turn_id TEXT\073
  v_count INTEGER\073
  v_wait INTEGER\073
  v_deleting TIMESTAMPTZ\073
BEGIN
  SELECT u.deleting_since INTO v_deleting FROM users u WHERE u.id = p_user_id FOR UPDATE\073
  IF v_deleting IS NOT NULL THEN
    RETURN QUERY SELECT ''account_deleting''::TEXT, NULL::INTEGER, NULL::INTEGER, NULL::TEXT, NULL::TEXT,
      NULL::"TurnStatus", NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::TIMESTAMPTZ,
      NULL::TIMESTAMPTZ, NULL::INTEGER, NULL::JSONB, NULL::INTEGER\073
    RETURN\073
  END IF\073

  IF p_key IS NOT NULL THEN
    -- A key past its TTL is as good as absent: the insert below replaces it.
    SELECT k.request_hash, k.turn_id INTO v_hash, v_turn_id
      FROM idempotency_keys k
     WHERE k.user_id = p_user_id AND k.key = p_key AND k.created_at > now() - make_interval(hours => p_key_ttl_hours)\073
    IF FOUND THEN
      IF v_hash <> p_request_hash THEN
        RETURN QUERY SELECT ''key_reused''::TEXT, NULL::INTEGER, NULL::INTEGER, NULL::TEXT, NULL::TEXT,
          NULL::"TurnStatus", NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::TIMESTAMPTZ,
          NULL::TIMESTAMPTZ, NULL::INTEGER, NULL::JSONB, NULL::INTEGER\073
      ELSE
        RETURN QUERY SELECT ''replayed''::TEXT, NULL::INTEGER, NULL::INTEGER, v_turn_id, NULL::TEXT,
          NULL::"TurnStatus", NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::TIMESTAMPTZ,
          NULL::TIMESTAMPTZ, NULL::INTEGER, NULL::JSONB, NULL::INTEGER\073
      END IF\073
      RETURN\073
    END IF\073
  END IF\073

  IF p_cost_cap_reached THEN
    RETURN QUERY SELECT ''cost_cap''::TEXT, NULL::INTEGER, NULL::INTEGER, NULL::TEXT, NULL::TEXT,
      NULL::"TurnStatus", NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::TIMESTAMPTZ,
      NULL::TIMESTAMPTZ, NULL::INTEGER, NULL::JSONB, NULL::INTEGER\073
    RETURN\073
  END IF\073

  SELECT COUNT(*)::INTEGER INTO v_count
    FROM turns t WHERE t.user_id = p_user_id AND t.status IN (''queued'', ''running'')\073
  IF v_count >= p_max_in_flight THEN
    RETURN QUERY SELECT ''concurrency''::TEXT, v_count, NULL::INTEGER, NULL::TEXT, NULL::TEXT,
      NULL::"TurnStatus", NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::TIMESTAMPTZ,
      NULL::TIMESTAMPTZ, NULL::INTEGER, NULL::JSONB, NULL::INTEGER\073
    RETURN\073
  END IF\073

  -- The p_max_per_window-th newest turn of the window, if there is one: the limit is reached, and a slot
  -- frees when it leaves the window.
  SELECT ceil(extract(epoch FROM t.created_at + make_interval(secs => p_window_seconds) - now()))::INTEGER
    INTO v_wait
    FROM turns t
   WHERE t.user_id = p_user_id AND t.created_at > now() - make_interval(secs => p_window_seconds)
   ORDER BY t.created_at DESC OFFSET p_max_per_window - 1 LIMIT 1\073
  IF FOUND THEN
    RETURN QUERY SELECT ''rate_limited''::TEXT, NULL::INTEGER, v_wait, NULL::TEXT, NULL::TEXT,
      NULL::"TurnStatus", NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::JSONB, NULL::TIMESTAMPTZ,
      NULL::TIMESTAMPTZ, NULL::INTEGER, NULL::JSONB, NULL::INTEGER\073
    RETURN\073
  END IF\073

  INSERT INTO turns (id, user_id, status, messages, context)
  VALUES (p_turn_id, p_user_id, ''queued'', p_messages, p_context)\073
  IF p_key IS NOT NULL THEN
    INSERT INTO idempotency_keys (user_id, key, request_hash, turn_id) VALUES (p_user_id, p_key, p_request_hash, p_turn_id)
    ON CONFLICT (user_id, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, turn_id = EXCLUDED.turn_id, created_at = now()\073
  END IF\073
  RETURN QUERY SELECT ''created''::TEXT, NULL::INTEGER, NULL::INTEGER, t.id, t.user_id, t.status, t.messages,
    t.context, t.result, t.error, t.created_at, t.completed_at, t.attempt, t.previous_attempts, t.last_event_id
    FROM turns t WHERE t.id = p_turn_id\073
END\073
';
