#!lua
--[[
  Moves the waiting plain inputs (not follow-ups) submitted after the open run's first input
  into the transcript and the run. An older one (fetched late by another coordinator) waits
  for a run of its own instead of joining one that started without it. Its cost grows with
  the inputs it moves, never with the follow-ups that wait.

  Input:
    KEYS[1] lease
    KEYS[2] runInputs
    KEYS[3] inputs
    KEYS[4] pendingInputs
    KEYS[5] messages
    KEYS[6] run

    ARGV[1] token
    ARGV[2] the transcript's expected length, or '' (see appendMessages-3)
    ARGV[3] the open run's order (startRun-9 returns it), or '' to read it from the run

  Output:
    {-1} not ours · {-2} not the expected length (nothing moved) · {1, id, message, ...}
]]
-- @include drainInputs
return drainInputs(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], ARGV[2], ARGV[3], nil)
