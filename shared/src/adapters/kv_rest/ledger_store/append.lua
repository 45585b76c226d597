-- Appends one record to the ledger, atomically (freedom-shared store::kv).
--
-- KEYS: 1 head (hash: size, root, frontier, tiles)   2 ids (hash: id -> "seq leafhex")
--       3 the new record's key                4 its time index (a snapshot's
--       series, or the decisions)             5 strategies (hash: "mode strategy" -> latest seq)
--       6 index of kind, mode and strategy    7 index of kind and mode
--       8 the first record's key (rec:1)
--       9... the hash tiles the new nodes go to (one per node)
-- ARGV: 1 expected size   2 expected root (hex; empty for the empty tree)
--       3 id   4 kind   5 strategies field   6 asOf code (16 hex)   7 seq code (16 hex)
--       8 leaf hash (hex)   9 canonical text   10 new size (= seq)   11 new root   12 new frontier
--       13 the key prefix as a SCAN pattern (glob characters escaped)
--       14 the prefix's length
--       15... per tile in KEYS[9...]: "<its length before this append>:<the new node's hash>"
--       then "dry" for a dry run (every check, then nothing written) or "write"
--
-- The head's `tiles` field is how many leaves the tiles cover. The nodes
-- are appended to the tiles only when they cover the whole tree (always,
-- except for a ledger written before tiles were kept, whose tiles the
-- reader builds first).
--
-- A lost key must never turn an append into a rewrite. Before anything
-- else the script checks that the keys it reads agree with one another,
-- and refuses with an error ("ledger_damaged: ...", a 500 at the API)
-- when they do not: a missing head while any of the ledger's keys exist
-- (which would read as an empty ledger and write rec:1 again: the keys
-- this append touches are checked first, then the prefix is scanned,
-- which happens only at the first append of a ledger and after a loss); a
-- head without its id index; a record already stored at the new seq; a
-- series whose time index and latest-snapshot entry disagree, or whose
-- page indexes are gone; a tile whose length is not where the new node
-- goes. Nothing is written then.
--
-- The contract's checks run in its order: id (identical -> unchanged, else
-- id_conflict), then for snapshots the slot (duplicate_snapshot) and the
-- order (out_of_order), and last the head: if it is not the one the caller
-- computed the new root from, nothing is written and the current head is
-- returned so the caller can recompute and try again.

local function damaged(why)
  return redis.error_reply('ledger_damaged: ' .. why)
end

local function exists(key)
  return redis.call('EXISTS', key) == 1
end

local head = redis.call('HMGET', KEYS[1], 'size', 'root', 'frontier', 'tiles')
local size = head[1]
if not size then
  for _, i in ipairs({2, 4, 5, 6, 7, 8}) do
    if exists(KEYS[i]) then
      return damaged('the head is missing while the ledger has records')
    end
  end
  for i = 9, #KEYS do
    if exists(KEYS[i]) then
      return damaged('the head is missing while the ledger has tiles')
    end
  end
  -- Keys under the prefix that are not the ledger's: the scanner's, the
  -- signer's memory and the dashboard's roll-ups (derived data).
  local others = {'scanner:', 'log:', 'rollup:'}
  local cursor = '0'
  repeat
    local found = redis.call('SCAN', cursor, 'MATCH', ARGV[13] .. '*', 'COUNT', 1000)
    cursor = found[1]
    for _, key in ipairs(found[2]) do
      local rest = string.sub(key, tonumber(ARGV[14]) + 1)
      local ledger = true
      for _, other in ipairs(others) do
        if string.sub(rest, 1, string.len(other)) == other then
          ledger = false
        end
      end
      if ledger then
        return damaged('the head is missing while the ledger has other keys')
      end
    end
  until cursor == '0'
  size = '0'
else
  if not head[2] or not head[3] then
    return damaged('the head has lost its root or frontier')
  end
  if not exists(KEYS[2]) then
    return damaged('the id index is missing')
  end
end

if ARGV[4] == 'snapshot' then
  local has_latest = redis.call('HEXISTS', KEYS[5], ARGV[5]) == 1
  local has_series = exists(KEYS[4])
  if has_latest ~= has_series then
    return damaged('the series time index and its latest snapshot disagree')
  end
  if has_series and not (exists(KEYS[6]) and exists(KEYS[7])) then
    return damaged('a page index of the series is missing')
  end
elseif exists(KEYS[6]) and not (exists(KEYS[4]) and exists(KEYS[7])) then
  return damaged('the decisions index is missing')
elseif exists(KEYS[7]) and not exists(KEYS[4]) then
  return damaged('the decisions time index is missing')
end

local existing = redis.call('HGET', KEYS[2], ARGV[3])
if existing then
  local space = string.find(existing, ' ', 1, true)
  local seq = string.sub(existing, 1, space - 1)
  if string.sub(existing, space + 1) == ARGV[8] then
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

if size ~= ARGV[1] or (head[2] or '') ~= ARGV[2] then
  return {'moved', size, head[3] or ''}
end

if exists(KEYS[3]) then
  return damaged('a record is already stored beyond the head')
end
local extend_tiles = (head[4] or '0') == size
if extend_tiles then
  for i = 9, #KEYS do
    local node = ARGV[i + 6]
    local colon = string.find(node, ':', 1, true)
    if redis.call('STRLEN', KEYS[i]) ~= tonumber(string.sub(node, 1, colon - 1)) then
      return damaged('a hash tile does not end where the new node goes')
    end
  end
end

if ARGV[#KEYS + 7] == 'dry' then
  return {'created'}
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
if extend_tiles then
  for i = 9, #KEYS do
    local node = ARGV[i + 6]
    redis.call('APPEND', KEYS[i], string.sub(node, string.find(node, ':', 1, true) + 1))
  end
  redis.call('HSET', KEYS[1], 'tiles', ARGV[10])
end
return {'created'}
