-- Reads a series' snapshots after a cursor (freedom-shared store::kv): a
-- series export's page. One round trip.
--
-- KEYS: 1 the series' page index (sorted set of seqs, score = seq)
-- ARGV: 1 the records' key prefix   2 the bound "(N": seqs above N
--       3 the most snapshots
--
-- Returns {seq, record, seq, record, ...} in seq order; a missing record
-- is false, for the caller to report.

local out = {}
for _, seq in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], '+inf', 'LIMIT', 0, tonumber(ARGV[3]))) do
  table.insert(out, seq)
  table.insert(out, redis.call('GET', ARGV[1] .. seq))
end
return out
