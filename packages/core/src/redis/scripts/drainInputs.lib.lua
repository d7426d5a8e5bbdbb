--[[
  Included (`-- @include drainInputs`) by drainInputs-6 and sessionWrites-8.

  drainInputs(lease key, runInputs key, inputs key, pendingInputs key, messages key, run key,
  token, expected length or '', the run's order or '', known) moves the waiting plain inputs
  (not follow-ups) submitted after the open run's first input into the transcript and the run
  (see drainInputs-6). `known` is what the calling script already proved, or nil: `token`, the
  token an earlier write of the same script found holding the lease, and `length`, the
  transcript's length after that write; with it the lease and the length are not read again
  (nothing else runs between two writes of one script).

  Returns {-1} not ours · {-2} not the expected length (nothing moved) · {1, id, message, ...}
]]
local function drainInputs(leaseKey, runInputsKey, inputsKey, pendingKey, messagesKey, runKey, token, expected, order, known)
  local proven = known ~= nil and known.token == token
  if not proven and redis.call('GET', leaseKey) ~= token then return {-1} end
  if expected ~= '' then
    local length = proven and known.length or nil
    if length == nil then length = redis.call('LLEN', messagesKey) end
    if length ~= tonumber(expected) then return {-2} end
  end
  local opened = order
  if not opened or opened == '' then opened = redis.call('HGET', runKey, 'order') or '-inf' end
  local ids = redis.call('ZRANGEBYSCORE', pendingKey, '(' .. opened, '+inf')
  local moved = {1}
  for _, id in ipairs(ids) do
    redis.call('ZREM', pendingKey, id)
    local message = redis.call('HGET', inputsKey, id)
    if message then
      redis.call('RPUSH', messagesKey, message)
      redis.call('RPUSH', runInputsKey, id)
      table.insert(moved, id)
      table.insert(moved, message)
    end
  end
  return moved
end
