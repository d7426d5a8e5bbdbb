#!lua
--[[
  Marks a session's open run as aborted, so whichever coordinator holds or resumes it stops
  it (a parked run, or one whose holder died), and takes a client's abort request of the
  session (`abortRequested`) in the same step. Nothing when no run is open: an abort never
  reaches a later run.

  Input:
    KEYS[1] run
    KEYS[2] abortRequested

  Output:
    1 marked · 0 no run open
]]
redis.call('DEL', KEYS[2])
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'aborted', '1')
return 1
