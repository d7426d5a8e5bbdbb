#!lua
--[[
  The session of a coordinator-queue job that names none: the one recorded in the job at its
  first intake, else the new random id given, recorded now. So a job delivered again (its
  coordinator died, a retry from the board) lands in the same session. The field lives in
  BullMQ's hash of the job, and goes with it.

  Input:
    KEYS[1] the job's BullMQ hash

    ARGV[1] the field that holds the session id
    ARGV[2] a new random session id

  Output:
    the job's session id · '' when the job no longer exists (nothing is written)
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return '' end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then return ARGV[2] end
return redis.call('HGET', KEYS[1], ARGV[1])
