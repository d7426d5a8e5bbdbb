--[[
  Takes a session's lease, or renews it when the caller holds it already.

  Input:
    KEYS[1] lease

    ARGV[1] token
    ARGV[2] lease ms

  Output:
    1 acquired (or already ours) · 0 held by another coordinator
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
