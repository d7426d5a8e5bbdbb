#!lua
--[[
  Aborts a child session's run for its aborted tree, whether or not the run has opened: an
  open run is marked aborted (as markRunAborted-2 does, taking a client's abort request in
  the same step); with no run open (the child's request is not taken in yet, or its run is
  still to open) an `abortOnStart` mark is left, which the session's next run takes as it
  opens (startRun-9.lua), opening aborted. One script in the child's slot, so a run opens
  either before it (and is marked) or after it (and takes the mark): none escapes.

  Input:
    KEYS[1] run
    KEYS[2] abortRequested
    KEYS[3] abortOnStart

    ARGV[1] how long the mark is kept (seconds: the session's TTL)

  Output:
    1 the open run was marked · 0 no run open: the mark waits for the next run
]]
redis.call('DEL', KEYS[2])
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'aborted', '1')
  return 1
end
redis.call('SET', KEYS[3], '1', 'EX', ARGV[1])
return 0
