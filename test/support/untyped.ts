/**
 * A value whose shape the test asserts at run time: a JSON reply read field by field, an object inside the page of
 * a browser test. `expect()` is its type check; a declared type would only repeat the assertion. This alias is the
 * test suite's one `any`, so that no other file needs one.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Untyped = any;
