#!lua
--[[
  Publishes a batch of one session's events, in order, in one step: each stored event as
  publishEvent-1 does (numbered, appended to the capped replay stream, published), each
  live-only event as publishLiveEvent-1 does (published with `live: true` and the number of
  the latest stored event before it). Their numbers follow the stream's newest one, read once, and they are published
  as one message, one event a line (openBatch, publishBatch in appendEvent.lib.lua). The
  events of a batch are the ones a coordinator sent
  one after another on its connection (state/eventBatches.ts), so the stream, the channel and
  the numbers see exactly the order they would have seen one script call each. With a guess
  of the stream's newest entry (ARGV[4]), the stream is not read unless the guess proves wrong
  (see appendEvent.lib.lua).

  Input:
    KEYS[1] events stream

    ARGV[1] events channel
    ARGV[2] stream max length
    ARGV[3] stream max bytes
    ARGV[4] the stream's newest entry as the caller guesses it, `<seq>:<total>`, or '' (read it)
    ARGV[5..] pairs: kind ('s' stored, 'l' live), event JSON (without seq)

  Output:
    { the number of the last stored event (the latest number when the batch stored none),
      the stream's byte total after the batch }
]]
-- @include appendEvent
local events = openBatch(KEYS[1], ARGV[4])
for i = 5, #ARGV, 2 do
  if ARGV[i] == 's' then
    appendNextEvent(events, KEYS[1], ARGV[1], ARGV[i + 1], ARGV[2], ARGV[3])
  else
    publishLive(events, ARGV[1], ARGV[i + 1], KEYS[1])
  end
end
publishBatch(events, ARGV[1])
return { events.seq, events.total }
