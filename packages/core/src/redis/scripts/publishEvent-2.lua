--[[
  Numbers an event, appends it to the session's capped replay stream and publishes it, in one
  step, so the live order, the replay order and the numbers always agree. The stream entry id
  is `<seq>-1`, which makes "every event after seq N" one XRANGE. `seq` is spliced into the
  JSON text so nothing here re-encodes the payload.

  Input:
    KEYS[1] seq
    KEYS[2] events stream

    ARGV[1] events channel
    ARGV[2] event JSON (without seq)
    ARGV[3] stream max length

  Output:
    the event's number
]]
local seq = redis.call('INCR', KEYS[1])
local msg = '{"seq":' .. seq .. ',' .. string.sub(ARGV[2], 2)
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], seq .. '-1', 'e', msg)
redis.call('PUBLISH', ARGV[1], msg)
return seq
