--[[
  Publishes a live-only event. It carries the number of the latest stored event, read in the
  same step, so a reader can tell whether it is in step with the stored events.

  Input:
    KEYS[1] seq

    ARGV[1] events channel
    ARGV[2] event JSON (without seq)

  Output:
    the latest stored event's number
]]
local seq = tonumber(redis.call('GET', KEYS[1]) or '0')
local msg = '{"seq":' .. seq .. ',"live":true,' .. string.sub(ARGV[2], 2)
redis.call('PUBLISH', ARGV[1], msg)
return seq
