#!lua
--[[
  Numbers an event, appends it to the session's capped replay stream and publishes it, in one
  step, so the live order, the replay order and the numbers always agree (see
  appendEvent.lib.lua: the stream keeps about `max length` entries and at most `max bytes`
  bytes of events).

  Input:
    KEYS[1] events stream

    ARGV[1] events channel
    ARGV[2] event JSON (without seq)
    ARGV[3] stream max length
    ARGV[4] stream max bytes

  Output:
    the event's number
]]
-- @include appendEvent
return appendEvent(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
