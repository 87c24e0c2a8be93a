#!/bin/bash
# kernel_time.sh OUT CMD [ARGS...]
#
# Runs CMD with kernel tracepoints recording its system calls, softirqs, interrupts,
# wake-ups and TCP retransmissions (tracefs, root), then writes the raw trace to
# OUT.trace and CMD's output to OUT.out. `python3 bench/kernel_time.py OUT.trace
# CALLS` then says where the kernel time went per call: what `strace -c` cannot
# show (softirq work done inside a write, the wake-ups of other CPUs) and without
# strace's slowdown. Used to compare clients per request (bench/README.md, CR).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OUT CMD [ARGS...]" >&2; exit 1; }
out=$1; shift
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null || true
[ -w $T/tracing_on ] || { echo "kernel_time.sh: $T is not writable (needs root and tracefs)" >&2; exit 1; }
events=(raw_syscalls/sys_enter raw_syscalls/sys_exit irq/softirq_entry irq/softirq_exit
  irq_vectors/local_timer_entry irq_vectors/local_timer_exit
  irq_vectors/reschedule_entry irq_vectors/reschedule_exit
  irq_vectors/call_function_single_entry irq_vectors/call_function_single_exit
  exceptions/page_fault_user sched/sched_switch sched/sched_waking
  ipi/ipi_send_cpu tcp/tcp_retransmit_skb)
cleanup() {
  echo 0 > $T/tracing_on
  for e in "${events[@]}"; do echo 0 > $T/events/$e/enable 2>/dev/null || true; done
  echo > $T/set_event_pid
  echo > $T/trace
}
trap cleanup EXIT
echo 0 > $T/tracing_on
echo > $T/trace
echo 65536 > $T/buffer_size_kb
echo 1 > $T/options/event-fork
for e in "${events[@]}"; do
  if [ -e $T/events/$e/enable ]; then echo 1 > $T/events/$e/enable; fi
done
# The traced process is this shell's child, then CMD itself (exec keeps the pid).
bash -c 'echo $$ > /sys/kernel/tracing/set_event_pid; echo 1 > /sys/kernel/tracing/tracing_on; exec "$@"' \
  _ "$@" > "$out.out" 2>&1 || true
echo 0 > $T/tracing_on
cat $T/trace > "$out.trace"
if grep -q "LOST" "$out.trace"; then echo "kernel_time.sh: events were lost (trace buffer full)" >&2; fi
echo "$out.trace: $(wc -l < "$out.trace") lines"
