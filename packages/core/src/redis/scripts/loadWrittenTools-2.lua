#!lua flags=no-writes
--[[
  Reads the written tools' revision and every current definition in one atomic step.

  Input:
    KEYS[1] rev
    KEYS[2] tools

  Output:
    {rev, {name, definition, name, definition, ...}}
]]
return {redis.call('GET', KEYS[1]) or '0', redis.call('HGETALL', KEYS[2])}
