--[[
  Appends several messages in order in one step (a batch's tool results). Its reply is not
  waited for: the run's next write goes right behind it with the length it expects.

  Input:
    KEYS[1] lease
    KEYS[2] messages
    KEYS[3] running

    ARGV[1] token
    ARGV[2] the transcript's expected length before this append, or ''
    ARGV[3..] pairs of (message JSON, tool call id or '')

  Output:
    the transcript's length · -1 not ours · -2 not the expected length (nothing written)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if ARGV[2] ~= '' and redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[2]) then return -2 end
local length = 0
for i = 3, #ARGV, 2 do
  if ARGV[i + 1] ~= '' then redis.call('HDEL', KEYS[3], ARGV[i + 1]) end
  length = redis.call('RPUSH', KEYS[2], ARGV[i])
end
return length
