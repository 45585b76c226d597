-- Shared by window.lua and since.lua (prepended to each, so each
-- script stays one self-contained source that Redis loads by its SHA).
--
-- records(prefix, members): time-index members "<asOf code>:<seq code>"
-- (16 hex digits each) as a flat list {seq, record, seq, record, ...},
-- reading each record at prefix .. seq; a missing record is false.
local function records(prefix, members)
  local out = {}
  for _, member in ipairs(members) do
    local seq = string.format('%.0f', tonumber(string.sub(member, 18), 16))
    table.insert(out, seq)
    table.insert(out, redis.call('GET', prefix .. seq))
  end
  return out
end

