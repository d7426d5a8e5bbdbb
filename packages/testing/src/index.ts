/**
 * `@yiem/testing`: fixtures for testing Yiem and the tools and agents built on it. Its exports
 * are listed here as the fixtures move in from test/support.
 */
export {};
