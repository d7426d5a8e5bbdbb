--[[
  A process's heartbeat: it counts as alive for ttl ms more (Redis' clock), and no longer as
  dead if a coordinator had found it so (a process stopped past its ttl that woke up; what it
  held was taken over and fences it out).

  Input:
    KEYS[1] alive (ZSET life id → alive until, ms)
    KEYS[2] dead (ZSET life id → found dead at, ms)

    ARGV[1] life id
    ARGV[2] ttl ms

  Output:
    1
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
