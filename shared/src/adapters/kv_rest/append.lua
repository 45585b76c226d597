-- Appends one record to the ledger, atomically (freedom-shared store::kv).
--
-- KEYS: 1 head (hash: size, root, frontier, tiles)   2 ids (hash: id -> "seq leafhex")
--       3 the new record's key                4 its time index (a snapshot's
--       series, or the decisions)             5 strategies (hash: "mode strategy" -> latest seq)
--       6 index of kind, mode and strategy    7 index of kind and mode
--       8... the hash tiles the new nodes go to (one per node)
-- ARGV: 1 expected size   2 expected root (hex; empty for the empty tree)
--       3 id   4 kind   5 strategies field   6 asOf code (16 hex)   7 seq code (16 hex)
--       8 leaf hash (hex)   9 canonical text   10 new size (= seq)   11 new root   12 new frontier
--       13... each new node's hash (hex), for KEYS[8...] in order
--
-- The head's `tiles` field is how many leaves the tiles cover. The nodes
-- are appended to the tiles only when they cover the whole tree (always,
-- except for a ledger written before tiles were kept, whose tiles the
-- reader builds first).
--
-- The checks run in the contract's order: id (identical -> unchanged, else
-- id_conflict), then for snapshots the slot (duplicate_snapshot) and the
-- order (out_of_order), and last the head: if it is not the one the caller
-- computed the new root from, nothing is written and the current head is
-- returned so the caller can recompute and try again.

local existing = redis.call('HGET', KEYS[2], ARGV[3])
if existing then
  local space = string.find(existing, ' ', 1, true)
  local seq = string.sub(existing, 1, space - 1)
  if string.sub(existing, space + 1) == ARGV[8] then
    local head = redis.call('HMGET', KEYS[1], 'size', 'root')
    return {'unchanged', seq, head[1], head[2]}
  end
  return {'id_conflict', seq}
end

if ARGV[4] == 'snapshot' then
  local same = redis.call('ZRANGEBYLEX', KEYS[4], '[' .. ARGV[6] .. ':', '(' .. ARGV[6] .. ';', 'LIMIT', 0, 1)
  if same[1] then
    return {'duplicate_snapshot', same[1]}
  end
  local latest = redis.call('ZREVRANGEBYLEX', KEYS[4], '+', '-', 'LIMIT', 0, 1)
  if latest[1] and string.sub(latest[1], 1, 16) > ARGV[6] then
    return {'out_of_order', latest[1]}
  end
end

local head = redis.call('HMGET', KEYS[1], 'size', 'root', 'frontier', 'tiles')
local size = head[1] or '0'
if size ~= ARGV[1] or (head[2] or '') ~= ARGV[2] then
  return {'moved', size, head[3] or ''}
end

redis.call('SET', KEYS[3], ARGV[8] .. ARGV[9])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[10] .. ' ' .. ARGV[8])
redis.call('ZADD', KEYS[4], 0, ARGV[6] .. ':' .. ARGV[7])
if ARGV[4] == 'snapshot' then
  redis.call('HSET', KEYS[5], ARGV[5], ARGV[10])
end
redis.call('ZADD', KEYS[6], ARGV[10], ARGV[10])
redis.call('ZADD', KEYS[7], ARGV[10], ARGV[10])
redis.call('HSET', KEYS[1], 'size', ARGV[10], 'root', ARGV[11], 'frontier', ARGV[12])
if (head[4] or '0') == size then
  for i = 8, #KEYS do
    redis.call('APPEND', KEYS[i], ARGV[i + 5])
  end
  redis.call('HSET', KEYS[1], 'tiles', ARGV[10])
end
return {'created'}
