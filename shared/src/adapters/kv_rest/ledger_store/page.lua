-- Reads a ledger page at one moment (freedom-shared store::kv; the page
-- rule is store::PageBuilder's): the head, the page's seqs, and their
-- records in order until the page's byte budget is spent. One round trip.
--
-- KEYS: 1 head (hash: size, root, ...)   2 ids (only to tell a lost head
--       from an empty ledger)   3... for a filtered page, the page indexes
--       to merge (sorted sets of seqs, score = seq); none for an unfiltered
--       page (every seq up to the head)
-- ARGV: 1 the records' key prefix   2 byte budget
--       3 bytes an entry adds besides its record
--       4 the cursor bound: "+inf", or "(N" for seqs below N   5 limit
--
-- Returns {size or false, root or false, candidates, seq, record, seq,
-- record, ...}: candidates is how many seqs matched, at most limit + 1 (so
-- the caller knows whether more remain); records follow, newest first,
-- every one while they fit, always at least one, stopping at the first that
-- would pass the budget. A missing record is false, for the caller to report.

local head = read_head(KEYS[1], KEYS[2])
local size = tonumber(head[1] or '0')
local limit = tonumber(ARGV[5])
local seqs = {}
if #KEYS == 2 then
  local top = size
  if ARGV[4] ~= '+inf' then
    local below = tonumber(string.sub(ARGV[4], 2)) - 1
    if below < top then top = below end
  end
  local seq = math.floor(top)
  while seq >= 1 and #seqs < limit + 1 do
    table.insert(seqs, seq)
    seq = seq - 1
  end
else
  for i = 3, #KEYS do
    for _, member in ipairs(redis.call('ZREVRANGEBYSCORE', KEYS[i], ARGV[4], '-inf', 'LIMIT', 0, limit + 1)) do
      table.insert(seqs, tonumber(member))
    end
  end
  table.sort(seqs, function(a, b) return a > b end)
end
local candidates = math.min(#seqs, limit + 1)
local out = {head[1], head[2], tostring(candidates)}
local budget = tonumber(ARGV[2])
local overhead = tonumber(ARGV[3])
for i = 1, math.min(#seqs, limit) do
  local seq = string.format('%.0f', seqs[i])
  local value = redis.call('GET', ARGV[1] .. seq)
  if not value then
    table.insert(out, seq)
    table.insert(out, false)
    break
  end
  local cost = string.len(value) - 64 + overhead
  if i > 1 and cost > budget then
    break
  end
  budget = budget - cost
  table.insert(out, seq)
  table.insert(out, value)
end
return out
