-- An event append in one statement (platform/event-log.ts): one round trip instead of seven (BEGIN, the row
-- lock, the dedupe lookup, the insert, the last_event_id advance, the notify, COMMIT). Called in autocommit it
-- is its own transaction, called inside one (the terminal transition, platform/turn-ending.ts) it holds the
-- turn row's lock until that commits. Guarantees, as before:
-- * gapless ids in commit order: the turn row is locked FOR UPDATE before ids are handed out from
--   turns.last_event_id, which advances in the same transaction as the inserts,
-- * dedupe per attempt: a dedupe key is prefixed with `attempt<n>:` from the second attempt on, and an event
--   whose key is already in the log, or earlier in the same batch, is dropped and takes no id,
-- * nothing after the end: once the turn is completed or failed, only `p_terminal_types` may be written,
-- * the commit notifies `turn_events` with `<turn_id>:<last_id>` (API processes LISTEN and fan out).
-- Returns, for each event written, its 1-based position in the input arrays and the id it got.
-- A turn that does not exist raises no_data_found (P0002), and nothing is written.
-- The body is an escape string whose statement ends are written \073 (a semicolon): `prisma migrate deploy`
-- runs migrations through the pg driver adapter, which splits a script at every semicolon, dollar quotes
-- and comments included.
CREATE FUNCTION append_turn_events(
  p_turn_id TEXT,
  p_types TEXT[],
  p_data JSON[],
  p_dedupe_keys TEXT[],
  p_terminal_types TEXT[]
) RETURNS TABLE (ord INTEGER, id INTEGER)
LANGUAGE plpgsql
AS E'
#variable_conflict use_column
DECLARE
  v_last INTEGER\073
  v_attempt INTEGER\073
  v_ended BOOLEAN\073
  v_ords INTEGER[]\073
  v_keys TEXT[]\073
BEGIN
  SELECT t.last_event_id, t.attempt, t.status IN (''completed'', ''failed'')
    INTO v_last, v_attempt, v_ended
    FROM turns t WHERE t.id = p_turn_id FOR UPDATE\073
  IF NOT FOUND THEN
    RAISE EXCEPTION ''turn % does not exist'', p_turn_id USING ERRCODE = ''no_data_found''\073
  END IF\073

  -- The events to write, in input order: writable once ended, their keys per attempt, each key once.
  SELECT array_agg(c.ord ORDER BY c.ord), array_agg(c.key ORDER BY c.ord)
    INTO v_ords, v_keys
    FROM (
      SELECT i.ord::INTEGER AS ord, i.key,
             row_number() OVER (PARTITION BY i.key ORDER BY i.ord) AS nth
        FROM (
          SELECT u.ord, u.type,
                 CASE WHEN u.key IS NOT NULL AND v_attempt > 1 THEN ''attempt'' || v_attempt || '':'' || u.key
                      ELSE u.key END AS key
            FROM unnest(p_types, p_dedupe_keys) WITH ORDINALITY AS u(type, key, ord)
        ) i
       WHERE (NOT v_ended OR i.type = ANY (p_terminal_types))
         AND (i.key IS NULL
              OR NOT EXISTS (SELECT 1 FROM turn_events e WHERE e.turn_id = p_turn_id AND e.dedupe_key = i.key))
    ) c
   WHERE c.key IS NULL OR c.nth = 1\073
  IF v_ords IS NULL THEN
    RETURN\073
  END IF\073

  INSERT INTO turn_events (turn_id, id, type, data, dedupe_key)
  SELECT p_turn_id, v_last + x.n::INTEGER, p_types[x.o], p_data[x.o], v_keys[x.n]
    FROM unnest(v_ords) WITH ORDINALITY AS x(o, n)\073
  UPDATE turns SET last_event_id = v_last + cardinality(v_ords) WHERE turns.id = p_turn_id\073
  PERFORM pg_notify(''turn_events'', p_turn_id || '':'' || (v_last + cardinality(v_ords)))\073

  RETURN QUERY SELECT x.o, v_last + x.n::INTEGER FROM unnest(v_ords) WITH ORDINALITY AS x(o, n) ORDER BY x.n\073
END\073
';
