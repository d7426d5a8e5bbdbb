#!lua
-- Reserves from a tenant's budget of one day, or reports to it: one ledger per tenant and day
-- (UTC), shared by all the tenant's runs on every coordinator.
-- KEYS[1]  the tenant's ledger of the day (a hash in the tenant's own slot)
-- ARGV[1]  what: "modelCall" (reserve one for the node), "childRun" (reserve a child's first
--          model call, prepaid for the child's session), "report" (only report), "finish"
--          (report, then forget the node: it reports no more)
-- ARGV[2]  the node reporting: "<session>:<run>"
-- ARGV[3]  the ledger's time to live, in seconds
-- ARGV[4]  the node's tokens so far, ARGV[5] its cost so far (µ$)
-- ARGV[6]  the session the reservation is for: the node's own, or the child's
-- ARGV[7]  how many limits follow, then name and value pairs (maxModelCalls, maxTokens,
--          maxCostUsd in µ$): the tenant's budget per day as now configured
-- Returns {"ok"} or {"refused", limit name, limit, used}: refused when used >= limit.
local ledger = KEYS[1]
local what, node, ttl, subject = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[6]

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
report('costMicros', ARGV[5])
redis.call('EXPIRE', ledger, ttl)
if what == 'finish' then
  redis.call('HDEL', ledger, node .. ':tokens', node .. ':costMicros')
  return {'ok'}
end
if what == 'report' then return {'ok'} end

-- A child's first model call was reserved when it was started: it spends that one.
local prepaid = 'prepaid:' .. subject
if what == 'modelCall' and tonumber(redis.call('HGET', ledger, prepaid) or '0') > 0 then
  if redis.call('HINCRBY', ledger, prepaid, -1) <= 0 then redis.call('HDEL', ledger, prepaid) end
  return {'ok'}
end

local used = {
  maxModelCalls = 'modelCalls',
  maxTokens = 'tokens',
  maxCostUsd = 'costMicros',
}
for i = 0, tonumber(ARGV[7]) - 1 do
  local name, limit = ARGV[8 + 2 * i], tonumber(ARGV[9 + 2 * i])
  local spent = tonumber(redis.call('HGET', ledger, used[name]) or '0')
  if spent >= limit then return {'refused', name, tostring(limit), tostring(spent)} end
end
redis.call('HINCRBY', ledger, 'modelCalls', 1)
if what == 'childRun' then redis.call('HINCRBY', ledger, prepaid, 1) end
return {'ok'}
