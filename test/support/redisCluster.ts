/** The Redis Cluster fixture moved to `@yiem/testing`; re-exported here so the tests that import this file stay as they are. */
export {
  CLUSTER_SLOT_COUNT,
  type ClusterMaster,
  redisSupportsCluster,
  startTestRedisCluster,
  type TestRedisCluster,
} from "@yiem/testing";
