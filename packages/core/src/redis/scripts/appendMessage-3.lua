#!lua
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
    ARGV[5] the transcript's length before this append as the caller knows it, or '': the
      message is then pushed at once, as appendMessages.lib.lua says

  A message that already is the transcript's last one is a resend (see appendMessages-3) and
  is not written again.

  Output:
    the transcript's length · -1 not ours · -2 not the expected length (nothing written)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local before = tonumber(ARGV[4] ~= '' and ARGV[4] or ARGV[5])
if before then
  local length = redis.call('RPUSH', KEYS[2], ARGV[2])
  if length == before + 1 then
    if ARGV[3] ~= '' then redis.call('HDEL', KEYS[3], ARGV[3]) end
    return length
  end
  redis.call('RPOP', KEYS[2]) -- taken back: the long way below sees the transcript as it was
end
if redis.call('LINDEX', KEYS[2], -1) == ARGV[2] then return redis.call('LLEN', KEYS[2]) end
if ARGV[4] ~= '' and redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[4]) then return -2 end
if ARGV[3] ~= '' then redis.call('HDEL', KEYS[3], ARGV[3]) end
return redis.call('RPUSH', KEYS[2], ARGV[2])
