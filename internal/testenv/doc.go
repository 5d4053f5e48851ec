// Package testenv decides what a test does when something it needs from
// outside the repository is missing (the shared LoCoMo data, the USE-lite
// model files, the avo generator in the module cache, root for a real small
// filesystem).
//
// Run by hand, such a test skips with a message that says how to provide
// the prerequisite. Under CI (the environment variable CI=true, which
// .ci/run's caller sets), the continuous-integration script has installed
// every prerequisite, so a missing one is a failure, never a silent skip:
// a test that cannot run must not look green.
package testenv
