-- Shared by page.lua and latest.lua (prepended to each, so each
-- script stays one self-contained source that Redis loads by its SHA).
--
-- read_head(head_key, ids_key): the head's {size, root} ({false, false}
-- for an empty ledger). A head that is missing while the id index exists
-- was lost, not empty: the script fails with "ledger_damaged: ..." (a 500
-- at the API) rather than answer an empty ledger.
local function read_head(head_key, ids_key)
  local head = redis.call('HMGET', head_key, 'size', 'root')
  if not head[1] and redis.call('EXISTS', ids_key) == 1 then
    error({err = 'ledger_damaged: the head is missing while the ledger has records'})
  end
  return head
end

