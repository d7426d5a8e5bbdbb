#!lua flags=allow-oom
--[[
  Records that a tool job ended and announces it, in one step: the finished marker (the job's
  result, or '1' for a job that fails) and the message the waiting coordinators read
  (protocol/toolJobEnds.ts). Redis refusing the write refuses both, so no coordinator acts on
  an end that is not stored: it sees the end through its polls instead, once BullMQ has stored
  it. Out of memory does not refuse it (`allow-oom`: one small key): BullMQ's finish, which
  goes out right behind it, is not refused then either (its first write only deletes the
  lock), and a job removed as it completes (`YIEM_TOOL_JOB_RETENTION_S` 0) must leave its
  marker, or a resumed run would find neither and run the call again.

  Input:
    KEYS[1] the job's finished marker (toolDone)

    ARGV[1] marker value
    ARGV[2] marker time to live, seconds
    ARGV[3] the queue's tool-ends channel
    ARGV[4] the announcement

  Output:
    the number of coordinators the announcement reached
]]
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return redis.call('PUBLISH', ARGV[3], ARGV[4])
