/**
 * `@yiem/core/errors`: the base of every Yiem error and its retry intent, alone, for a program
 * that must not load more (the `yiem` CLI's own errors extend it at start-up). It loads nothing;
 * `@yiem/core` and `@yiem/core/client` export the same names.
 */

export {
  type ErrorContext,
  isTransient,
  type RetryIntent,
  YiemError,
  type YiemErrorOptions,
} from "./yiemError.js";
