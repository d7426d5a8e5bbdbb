--[[
  Appends several messages in order in one step (a batch's tool results).

  Input:
    KEYS[1] lease
    KEYS[2] messages
    KEYS[3] running

    ARGV[1] token
    ARGV[2..] pairs of (message JSON, tool call id or '')

  Output:
    the transcript's length · -1 not ours
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local length = 0
for i = 2, #ARGV, 2 do
  if ARGV[i + 1] ~= '' then redis.call('HDEL', KEYS[3], ARGV[i + 1]) end
  length = redis.call('RPUSH', KEYS[2], ARGV[i])
end
return length
