/** Injection token for the validated PlatformConfig, shared by both apps. */
export const PLATFORM_CONFIG = Symbol('PLATFORM_CONFIG');
