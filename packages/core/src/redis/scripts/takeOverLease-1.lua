#!lua
--[[
  Takes a session's lease from a dead holder: only while it still holds that holder's token
  (so of two coordinators taking it over at once, one gets it). The dead holder's fenced
  writes fail from then on, as after its lease had run out.

  Input:
    KEYS[1] lease

    ARGV[1] the dead holder's token
    ARGV[2] the new token
    ARGV[3] lease ms

  Output:
    1 taken over · 0 the lease holds another token now
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
