"""An IPython kernel that stops answering, as ipykernel 7's defect does (tests/test_watchdog.py).

A cell whose code contains ``STALL_FOREVER`` is taken but never answered: the kernel reports idle and
sends no reply. A cell with ``STALL_UNTIL_POKED`` is held until any other shell request arrives (as a
request stuck in ipykernel 7's shell socket is read only when another connection sends something), then run.
"""

from ipykernel.ipkernel import IPythonKernel
from ipykernel.kernelapp import IPKernelApp


class StallingKernel(IPythonKernel):
    held = None
    released = False

    async def execute_request(self, *args):
        parent = args[-1]
        code = parent.get("content", {}).get("code", "")
        if "STALL_FOREVER" in code:
            return None
        if "STALL_UNTIL_POKED" in code and not self.released:
            self.held = args
            return None
        return await super().execute_request(*args)

    async def kernel_info_request(self, *args):
        if self.held is not None:
            held, self.held, self.released = self.held, None, True
            await super().execute_request(*held)
        return await super().kernel_info_request(*args)


if __name__ == "__main__":
    IPKernelApp.launch_instance(kernel_class=StallingKernel)
