# PyTorch side of bench/cpu_kernels_step.cpp: the MNIST example net (pytorch/examples mnist) at
# batch 64, forward+backward, then with Adam; median over 60 steps. Usage: python3 cpu_kernels_torch_step.py [threads=2]
import sys, time, statistics, torch, torch.nn as nn, torch.nn.functional as F
threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
torch.set_num_threads(threads)
class Net(nn.Module):
    def __init__(s):
        super().__init__()
        s.conv1 = nn.Conv2d(1, 32, 3, 1); s.conv2 = nn.Conv2d(32, 64, 3, 1)
        s.dropout1 = nn.Dropout(0.25); s.dropout2 = nn.Dropout(0.5)
        s.fc1 = nn.Linear(9216, 128); s.fc2 = nn.Linear(128, 10)
    def forward(s, x):
        x = F.relu(s.conv1(x)); x = F.relu(s.conv2(x)); x = F.max_pool2d(x, 2)
        x = s.dropout1(x); x = torch.flatten(x, 1); x = F.relu(s.fc1(x)); x = s.dropout2(x)
        return s.fc2(x)
torch.manual_seed(0)
net = Net(); opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randn(64, 1, 28, 28); y = torch.randint(0, 10, (64,))
def step(with_opt):
    opt.zero_grad(); loss = F.cross_entropy(net(x), y); loss.backward()
    if with_opt: opt.step()
for with_opt in (False, True):
    for _ in range(10): step(with_opt)
    t = []
    for _ in range(60):
        t0 = time.perf_counter(); step(with_opt); t.append((time.perf_counter() - t0) * 1e3)
    print(f"torch {torch.__version__} threads={torch.get_num_threads()} adam={with_opt}: median {statistics.median(t):.2f} ms/step, min {min(t):.2f}")
