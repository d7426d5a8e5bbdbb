--[[
  Appends a message to the transcript; a tool result also clears its call's "running here"
  mark.

  Input:
    KEYS[1] lease
    KEYS[2] messages
    KEYS[3] running

    ARGV[1] token
    ARGV[2] message JSON
    ARGV[3] tool call id, or ''
    ARGV[4] the transcript's expected length before this append, or '' (see appendMessages-3)

  A message that already is the transcript's last one is a resend (see appendMessages-3) and
  is not written again.

  Output:
    the transcript's length · -1 not ours · -2 not the expected length (nothing written)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LINDEX', KEYS[2], -1) == ARGV[2] then return redis.call('LLEN', KEYS[2]) end
if ARGV[4] ~= '' and redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[4]) then return -2 end
if ARGV[3] ~= '' then redis.call('HDEL', KEYS[3], ARGV[3]) end
return redis.call('RPUSH', KEYS[2], ARGV[2])
