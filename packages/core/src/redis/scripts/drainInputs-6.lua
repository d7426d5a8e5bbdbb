--[[
  Moves the waiting plain inputs (not follow-ups) submitted after the open run's first input
  into the transcript and the run. An older one (fetched late by another coordinator) waits
  for a run of its own instead of joining one that started without it. Its cost grows with
  the inputs it moves, never with the follow-ups that wait.

  Input:
    KEYS[1] lease
    KEYS[2] runInputs
    KEYS[3] inputs
    KEYS[4] pendingInputs
    KEYS[5] messages
    KEYS[6] run

    ARGV[1] token
    ARGV[2] the transcript's expected length, or '' (see appendMessages-3)
    ARGV[3] the open run's order (startRun-9 returns it), or '' to read it from the run

  Output:
    {-1} not ours · {-2} not the expected length (nothing moved) · {1, id, message, ...}
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-1} end
if ARGV[2] ~= '' and redis.call('LLEN', KEYS[5]) ~= tonumber(ARGV[2]) then return {-2} end
local opened = ARGV[3]
if not opened or opened == '' then opened = redis.call('HGET', KEYS[6], 'order') or '-inf' end
local ids = redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. opened, '+inf')
local moved = {1}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[4], id)
  local message = redis.call('HGET', KEYS[3], id)
  if message then
    redis.call('RPUSH', KEYS[5], message)
    redis.call('RPUSH', KEYS[2], id)
    table.insert(moved, id)
    table.insert(moved, message)
  end
end
return moved
