-- Reads a ledger page's records in order until the page's byte budget is
-- spent (freedom-shared store::kv; the rule is store::PageBuilder's).
--
-- KEYS: the records' keys, newest first (each value is the 64-hex leaf hash
--       followed by the canonical record)
-- ARGV: 1 byte budget   2 bytes an entry adds besides its record
--
-- Returns the values read: every one while they fit, always at least one,
-- and stops at the first that would pass the budget (not returned), so a
-- page of large records never moves more than about the budget.

local budget = tonumber(ARGV[1])
local overhead = tonumber(ARGV[2])
local values = {}
for i, key in ipairs(KEYS) do
  local value = redis.call('GET', key)
  if not value then
    -- A missing record is the caller's to report (an index names it).
    values[i] = false
  else
    local cost = string.len(value) - 64 + overhead
    if i > 1 and cost > budget then
      break
    end
    budget = budget - cost
    values[i] = value
  end
end
return values
