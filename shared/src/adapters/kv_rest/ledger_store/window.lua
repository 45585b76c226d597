-- Reads the dashboard's window at one moment (freedom-shared store::kv):
-- each series' baseline and window snapshots, then the window's decisions,
-- records included, in one round trip.
--
-- KEYS: 1 the decisions' time index   2... each series' time index
-- ARGV: 1 the records' key prefix   2 bound "at or before the start"
--       3 bound "after the start"   4 bound "at or before the end"
--       5 the most decisions (0: none)
--
-- Time-index members are "<asOf code>:<seq code>" (16 hex digits each).
-- Returns one array per series, then one for the decisions (newest first),
-- each a flat list {seq, record, seq, record, ...}; a missing record is
-- false, for the caller to report.

local prefix = ARGV[1]

local result = {}
for i = 2, #KEYS do
  local members = redis.call('ZREVRANGEBYLEX', KEYS[i], ARGV[2], '-', 'LIMIT', 0, 1)
  for _, member in ipairs(redis.call('ZRANGEBYLEX', KEYS[i], ARGV[3], ARGV[4])) do
    table.insert(members, member)
  end
  table.insert(result, records(prefix, members))
end
local limit = tonumber(ARGV[5])
if limit > 0 then
  table.insert(result, records(prefix, redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[4], ARGV[3], 'LIMIT', 0, limit)))
else
  table.insert(result, {})
end
return result
