-- Back-fills outbox_events.dispatched_at for the events written before the dispatcher kept it.
-- Until now only the webhook fan-out recorded that it took an event (fanned_out_at), and the
-- sweep treated that as done; nothing recorded the other subscribers. fanned_out_at is the honest
-- best guess: the dispatcher handed each event to every subscriber in the same call, so a fanned-out
-- event was also offered to LTI passback, and no row can tell the rare lost one apart (re-sending
-- 30 days of events to find it would flood the queue). Events never fanned out stay NULL, so the
-- sweep re-sends them as before; pings (fanned_out_at set at insert) are covered too.
UPDATE outbox_events SET dispatched_at = fanned_out_at
WHERE fanned_out_at IS NOT NULL AND dispatched_at IS NULL;
