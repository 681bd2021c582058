-- The commit's notification carries the appended events when they fit, so that an API process delivers
-- them to its streams without reading them back (api/event-hub.ts): one round trip to Postgres per append
-- instead of one per append and per API process holding the turn's streams. Otherwise the function is
-- append_turn_events as created in 20261210100000_append_turn_events_function, whose header says what it
-- guarantees. The body's statement ends are written \073, for the reason given there.
CREATE OR REPLACE FUNCTION append_turn_events(
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
  v_notice TEXT\073
  v_full TEXT\073
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
  -- The notification carries the events themselves when they fit (a payload must stay under 8000 bytes),
  -- so that API processes deliver them without reading them back: <turn_id>:<last_id>:[[id,type,data],...],
  -- each data its stored text, byte for byte. Larger appends notify <turn_id>:<last_id> alone, as before.
  v_notice := p_turn_id || '':'' || (v_last + cardinality(v_ords))\073
  SELECT v_notice || '':['' || string_agg(''['' || (v_last + x.n) || '','' || to_json(p_types[x.o])::TEXT || '',''
                                        || p_data[x.o]::TEXT || '']'', '','' ORDER BY x.n) || '']''
    INTO v_full
    FROM unnest(v_ords) WITH ORDINALITY AS x(o, n)\073
  IF octet_length(v_full) < 7900 THEN
    v_notice := v_full\073
  END IF\073
  PERFORM pg_notify(''turn_events'', v_notice)\073

  RETURN QUERY SELECT x.o, v_last + x.n::INTEGER FROM unnest(v_ords) WITH ORDINALITY AS x(o, n) ORDER BY x.n\073
END\073
';
