#!lua
-- Reserves from a tree's budget, or reports to it: one ledger per tree of agents, at its root.
-- KEYS[1]  the tree's ledger (a hash in the root session's slot)
-- ARGV[1]  what: "modelCall" (reserve one for the node), "childRun" (reserve a child's first
--          model call, prepaid for the child's session), "report" (only report)
-- ARGV[2]  the node reporting: "<session>:<run>"
-- ARGV[3]  the ledger's time to live, in seconds
-- ARGV[4]  the node's tokens so far, ARGV[5] its tool calls so far, ARGV[6] its cost so far (µ$)
-- ARGV[7]  the session the reservation is for: the node's own, or the child's
-- ARGV[8]  how many limits follow (only the root sends them), then name and value pairs;
--          a limit already set is only ever lowered
-- Returns {"ok"} or {"refused", limit name, limit, used}: refused when used >= limit.
local ledger = KEYS[1]
local what, node, ttl, subject = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[7]

local limits = tonumber(ARGV[8])
for i = 0, limits - 1 do
  local field = 'limit:' .. ARGV[9 + 2 * i]
  local value = tonumber(ARGV[10 + 2 * i])
  local set = tonumber(redis.call('HGET', ledger, field) or '')
  if set == nil or value < set then redis.call('HSET', ledger, field, value) end
end

-- A node's usage is reported as its running totals: only what is new is added, so a resumed
-- run reporting again never counts twice.
local function report(field, total)
  local mine = node .. ':' .. field
  local before = tonumber(redis.call('HGET', ledger, mine) or '0')
  local now = tonumber(total)
  if now > before then
    redis.call('HSET', ledger, mine, now)
    redis.call('HINCRBY', ledger, field, now - before)
  end
end
report('tokens', ARGV[4])
report('toolCalls', ARGV[5])
report('costMicros', ARGV[6])
redis.call('EXPIRE', ledger, ttl)
if what == 'report' then return {'ok'} end

-- A child's first model call was reserved when it was started: it spends that one.
local prepaid = 'prepaid:' .. subject
if what == 'modelCall' and tonumber(redis.call('HGET', ledger, prepaid) or '0') > 0 then
  redis.call('HINCRBY', ledger, prepaid, -1)
  return {'ok'}
end

local checks = {
  {'maxModelCalls', 'modelCalls'},
  {'maxTokens', 'tokens'},
  {'maxToolCalls', 'toolCalls'},
  {'maxCostUsd', 'costMicros'},
}
for _, check in ipairs(checks) do
  local limit = redis.call('HGET', ledger, 'limit:' .. check[1])
  if limit then
    local used = tonumber(redis.call('HGET', ledger, check[2]) or '0')
    if used >= tonumber(limit) then return {'refused', check[1], limit, tostring(used)} end
  end
end
redis.call('HINCRBY', ledger, 'modelCalls', 1)
if what == 'childRun' then redis.call('HINCRBY', ledger, prepaid, 1) end
return {'ok'}
