#!/usr/bin/env bash
# perf-shares.sh FILE...: where a daemon's CPU went, by kind of work, from
# perf recordings (PERF_DIR=DIR tests/bench/loopback-cpu.sh writes
# DIR/ldsd-A.data and DIR/ldsd-B.data): AEAD (libcrypto or ipsec-mb), copies in user
# space (memcpy/memmove) and in the kernel (socket copies), CRC-32C, the
# rest of the kernel's network path, system call entry and scheduling,
# epoll and eventfds, page faults, ldsd's own code.  Shares of the samples,
# by the symbol each sample was taken in (perf report --no-children).
for f in "$@"; do
	echo "== $f"
	perf report -i "$f" --no-children --sort dso,symbol -g none 2> /dev/null | grep -v '^#' | grep '%' | awk '
	{
		p = $1; sub("%", "", p); dso = $2; sym = $4
		if (dso ~ /libcrypto|libIPSec_MB/) c = "AEAD (libcrypto, ipsec-mb)"
		else if (sym ~ /^crc/) c = "CRC-32C"
		else if (dso ~ /kernel/ && sym ~ /_copy_(from|to)_iter|copy_user|rep_movs|memcpy|memmove/) c = "copy, kernel (socket data)"
		else if (sym ~ /memmove|memcpy/) c = "copy, user space (memcpy)"
		else if (sym ~ /^ep_|epoll|eventfd/) c = "epoll, eventfd"
		else if (sym ~ /entry_SYSCALL|syscall|__x64_sys|irqentry_exit|finish_task_switch|schedule/) c = "system call entry/exit, scheduling"
		else if (sym ~ /clear_page|page_fault|exc_page|get_page_from|__free|alloc_pages|free_frozen|rmqueue|folio/) c = "page faults, page allocation"
		else if (dso ~ /kernel/) c = "kernel, other (TCP/IP, loopback, skbs)"
		else if (dso == "ldsd") c = "ldsd code"
		else c = "other (libc, ...)"
		s[c] += p
	}
	END { for (k in s) printf "%6.1f %%  %s\n", s[k], k }' | sort -rn
done
