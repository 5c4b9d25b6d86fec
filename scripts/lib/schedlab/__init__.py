"""schedlab: the host side of the pluggable-scheduler series. Prepare and
build the kernel, boot it under QEMU, run the tests, benchmarks and the
seeds' experiments. Every command of scripts/ is `schedlab COMMAND`
(__main__.py); see README.md."""
