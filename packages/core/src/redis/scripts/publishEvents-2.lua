--[[
  Publishes a batch of one session's events, in order, in one step: each stored event as
  publishEvent-2 does (numbered, appended to the capped replay stream, published), each
  live-only event as publishLiveEvent-1 does (published with `live: true` and the number of
  the latest stored event before it). The events of a batch are the ones a coordinator sent
  one after another on its connection (state/eventBatches.ts), so the stream, the channel and
  the numbers see exactly the order they would have seen one script call each.

  Input:
    KEYS[1] seq
    KEYS[2] events stream

    ARGV[1] events channel
    ARGV[2] stream max length
    ARGV[3] stream max bytes
    ARGV[4..] pairs: kind ('s' stored, 'l' live), event JSON (without seq)

  Output:
    the number of the last stored event (the latest number when the batch stored none)
]]
-- @include appendEvent
local seq = nil
for i = 4, #ARGV, 2 do
  if ARGV[i] == 's' then
    seq = appendEvent(KEYS[1], KEYS[2], ARGV[1], ARGV[i + 1], ARGV[2], ARGV[3])
  else
    seq = seq or tonumber(redis.call('GET', KEYS[1]) or '0')
    redis.call('PUBLISH', ARGV[1], '{"seq":' .. seq .. ',"live":true,' .. string.sub(ARGV[i + 1], 2))
  end
end
return seq or tonumber(redis.call('GET', KEYS[1]) or '0')
