"""Does oneDNN's int8 matmul (onednn::qlinear_pointwise) saturate on this CPU? Full-range u8 activations (255)
against int8 weights of 127 and 63, 7-bit activations (127) against 127, and s8 activations, over K = 64 terms,
each against the exact int32 sum. Run with ONEDNN_VERBOSE=1 to see which implementation ran."""
import torch
torch.set_num_threads(1)
M,K,N = 4, 64, 16
for wmax, xmax in ((127,255),(63,255),(127,127)):
    qx = torch.full((M,K), xmax, dtype=torch.uint8)
    Wq = torch.full((N,K), wmax, dtype=torch.int8)
    ws = torch.ones(N); wzp = torch.zeros(N, dtype=torch.int64)
    qw = torch.ops.onednn.qlinear_prepack(Wq, [M,K])
    y = torch.ops.onednn.qlinear_pointwise(qx,1.0,0,qw,ws,wzp,None,1.0,0,torch.float32,'none',[],'')
    exact = float(xmax*wmax*K)
    print(f'x={xmax} w={wmax}: got {y[0,0].item()} exact {exact} ratio {y[0,0].item()/exact:.4f}', flush=True)
# s8 activations
qx = torch.full((M,K), 127, dtype=torch.int8); Wq = torch.full((N,K), 127, dtype=torch.int8)
qw = torch.ops.onednn.qlinear_prepack(Wq, [M,K])
y = torch.ops.onednn.qlinear_pointwise(qx,1.0,0,qw,torch.ones(N),torch.zeros(N,dtype=torch.int64),None,1.0,0,torch.float32,'none',[],'')
print('s8s8 127*127', y[0,0].item(), 127*127*K, flush=True)
