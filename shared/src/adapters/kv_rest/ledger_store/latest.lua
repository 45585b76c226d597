-- Reads, at one moment, the head, the ledger's first record and the latest
-- snapshot of every (strategy, mode) (freedom-shared store::kv): the
-- dashboard's first read in one round trip.
--
-- KEYS: 1 head (hash: size, root, ...)   2 strategies (hash: "mode strategy" -> latest seq)
--       3 ids (only to tell a lost head from an empty ledger)
-- ARGV: 1 the records' key prefix (a record's key is the prefix and its seq)
--
-- Returns {size or false, root or false, the first record or false,
--          seq 1, record 1, seq 2, record 2, ...} (records as stored: the
-- 64-hex leaf hash followed by the canonical text; false when missing).

local head = read_head(KEYS[1], KEYS[3])
local out = {head[1], head[2], redis.call('GET', ARGV[1] .. '1')}
for _, seq in ipairs(redis.call('HVALS', KEYS[2])) do
  table.insert(out, seq)
  table.insert(out, redis.call('GET', ARGV[1] .. seq))
end
return out
