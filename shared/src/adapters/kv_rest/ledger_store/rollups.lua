-- Keeps the dashboard's since-inception roll-ups (freedom-shared
-- store::kv), never moving one back: a stored roll-up of the same version
-- whose "from" time code is at or after the new one's stays.
--
-- KEYS: each series' roll-up hash
-- ARGV: per key, five values: version, from (time code), through (seq),
--       state, and "1" to overwrite whatever is stored (the reader could
--       not read it) or "0"
-- Returns how many were written.

local written = 0
for i = 1, #KEYS do
  local base = (i - 1) * 5
  local version, from = ARGV[base + 1], ARGV[base + 2]
  local stored = redis.call('HMGET', KEYS[i], 'version', 'from')
  if ARGV[base + 5] == '1' or stored[1] ~= version or not stored[2] or stored[2] < from then
    redis.call('HSET', KEYS[i], 'version', version, 'from', from,
      'through', ARGV[base + 3], 'state', ARGV[base + 4])
    written = written + 1
  end
end
return written
