#!lua
--[[
  A process's heartbeat: it counts as alive for ttl ms more (Redis' clock), and no longer as
  dead if a coordinator had found it so (a process stopped past its ttl that woke up; what it
  held was taken over and fences it out). It records whether Redis holds a subscriber of the
  life's channel (the process's own, `lifeChannel`): the life is `watched` while it does, on
  the node that answers for the keys, whatever a failover or a reconnect did to the
  subscription.

  Input:
    KEYS[1] alive (ZSET life id → alive until, ms)
    KEYS[2] dead (ZSET life id → found dead at, ms)
    KEYS[3] watched (SET of life ids whose subscription tells whether they are connected)

    ARGV[1] life id
    ARGV[2] ttl ms
    ARGV[3] the life's channel

  Output:
    1
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local subscribers = redis.call('PUBSUB', 'SHARDNUMSUB', ARGV[3])
if tonumber(subscribers[2]) > 0 then
  redis.call('SADD', KEYS[3], ARGV[1])
else
  redis.call('SREM', KEYS[3], ARGV[1])
end
return 1
