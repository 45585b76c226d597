-- Stores part of the log's hash tiles, built from the leaves, for a ledger
-- written before tiles were kept (freedom-shared store::kv).
--
-- KEYS: 1 head   2... hash tiles
-- ARGV: 1 the size the tiles were built for   2 'last' on the last part,
--       else 'part'   3... each tile's hashes (hex), for KEYS[2...]
--
-- Writes only while the head still has that size (else answers 'moved' and
-- the caller builds again): a builder that lost a race can never overwrite
-- tiles an append has since extended. The last part records that the tiles
-- cover the tree; from then on every append extends them itself.

local size = redis.call('HGET', KEYS[1], 'size') or '0'
if size ~= ARGV[1] then
  return 'moved'
end
for i = 2, #KEYS do
  redis.call('SET', KEYS[i], ARGV[i + 1])
end
if ARGV[2] == 'last' then
  redis.call('HSET', KEYS[1], 'tiles', ARGV[1])
end
return 'stored'
