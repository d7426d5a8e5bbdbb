#!lua
--[[
  Moves lives whose heartbeat ran out from alive to dead, once what they held was released;
  a life that beat again meanwhile stays alive. A buried life is no longer watched.

  Input:
    KEYS[1] alive (ZSET life id → alive until, ms)
    KEYS[2] dead (ZSET life id → found dead at, ms)
    KEYS[3] watched (SET of life ids whose subscription tells whether they are connected)

    ARGV[1..n] life ids

  Output:
    how many were moved
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local moved = 0
for _, life in ipairs(ARGV) do
  local until_ = tonumber(redis.call('ZSCORE', KEYS[1], life))
  if until_ and until_ <= now then
    redis.call('ZREM', KEYS[1], life)
    redis.call('SREM', KEYS[3], life)
    redis.call('ZADD', KEYS[2], now, life)
    moved = moved + 1
  end
end
return moved
