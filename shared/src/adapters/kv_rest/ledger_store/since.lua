-- Reads the since-inception dashboard at one moment (freedom-shared
-- store::kv): each series' roll-up and the snapshots it does not fold, and
-- the latest decisions, records included, in one round trip.
--
-- KEYS: 1 the decisions' time index, then per series its time index and
--       its roll-up hash (fields version, from, through, state)
-- ARGV: 1 the records' key prefix   2 the roll-up version asked for
--       3 the reader's head size    4 the most decisions (0: none)
--
-- A roll-up is used when its version is the one asked for and it folds no
-- seq beyond the head; then the series is read from its "from" time code
-- on, else from the start. Returns the decisions (newest first) as a flat
-- list {seq, record, ...}, then per series {state or false, {seq, record,
-- ...}}; a missing record is false, for the caller to report.

local prefix = ARGV[1]

local result = {}
local limit = tonumber(ARGV[4])
if limit > 0 then
  table.insert(result, records(prefix, redis.call('ZREVRANGEBYLEX', KEYS[1], '+', '-', 'LIMIT', 0, limit)))
else
  table.insert(result, {})
end
local head_size = tonumber(ARGV[3])
for i = 2, #KEYS, 2 do
  local stored = redis.call('HMGET', KEYS[i + 1], 'version', 'from', 'through', 'state')
  local state = false
  local members
  if stored[1] == ARGV[2] and stored[2] and stored[3] and stored[4]
      and tonumber(stored[3]) and tonumber(stored[3]) <= head_size then
    state = stored[4]
    members = redis.call('ZRANGEBYLEX', KEYS[i], '[' .. stored[2], '+')
  else
    members = redis.call('ZRANGEBYLEX', KEYS[i], '-', '+')
  end
  table.insert(result, {state, records(prefix, members)})
end
return result
