#!lua flags=allow-oom
--[[
  Publishes a live-only event. It carries the number of the latest stored event (the stream's
  newest entry's), read in the same step, so a reader can tell whether it is in step with the stored events.
  Runs while Redis is out of memory (`allow-oom`), as a plain PUBLISH would: it stores nothing.

  Input:
    KEYS[1] events stream

    ARGV[1] events channel
    ARGV[2] event JSON (without seq)

  Output:
    the latest stored event's number
]]
-- @include appendEvent
local seq = openEvents(KEYS[1]).seq
local msg = '{"seq":' .. seq .. ',"live":true,' .. string.sub(ARGV[2], 2)
redis.call('PUBLISH', ARGV[1], msg)
return seq
