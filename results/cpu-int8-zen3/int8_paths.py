"""The int8 linear paths LibTorch 2.11 offers, timed at minilm-l6's four GEMM shapes (M = batch x length rows),
against fp32 (ATen's linear and oneDNN on a pre-packed weight), each with its rel. L2 against ATen's fp32 linear.
2 threads; 3 warm-up calls, then the mean of n calls, in ms."""
import torch, time
torch.set_num_threads(2)
torch.manual_seed(0)
def bench(f, n=30):
    for _ in range(3): f()
    t=time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter()-t)/n*1e3
def qx_u8(x):
    mn, mx = torch.aminmax(x)
    mn = torch.clamp(mn, max=0); mx = torch.clamp(mx, min=0)
    s = (mx-mn)/255; s = torch.clamp(s, min=1e-8)
    zp = torch.round(-mn/s)
    q = torch.clamp(torch.round(x/s)+zp, 0, 255).to(torch.uint8)
    return q, s.item(), int(zp.item())
def qx_s8(x):
    a = x.abs().max(); s = torch.clamp(a/127, min=1e-8)
    return torch.clamp(torch.round(x/s), -127, 127).to(torch.int8), s.item(), 0
for M in (128, 1024):
  for K,N in ((384,1152),(384,384),(384,1536),(1536,384)):
    x = torch.randn(M,K); W = torch.randn(N,K)*0.05; b=torch.randn(N)
    ws = W.abs().amax(1)/127; Wq = torch.clamp(torch.round(W/ws[:,None]),-127,127).to(torch.int8)
    ref = torch.nn.functional.linear(x,W,b)
    r = {}
    r['aten fp32'] = bench(lambda: torch.nn.functional.linear(x,W,b))
    pw = torch.ops.mkldnn._reorder_linear_weight(W, None)
    r['mkldnn fp32 packed'] = bench(lambda: torch.ops.mkldnn._linear_pointwise(x,pw,b,'none',[],''))
    qw = torch.ops.onednn.qlinear_prepack(Wq, [M,K])
    wzp = torch.zeros(N, dtype=torch.int64)
    def onednn_u8():
        q,s,zp = qx_u8(x)
        return torch.ops.onednn.qlinear_pointwise(q,s,zp,qw,ws,wzp,b,1.0,0,torch.float32,'none',[],'')
    def onednn_gemm_only():
        return torch.ops.onednn.qlinear_pointwise(q0,s0,z0,qw,ws,wzp,b,1.0,0,torch.float32,'none',[],'')
    q0,s0,z0 = qx_u8(x)
    r['onednn u8s8 (+quant)'] = bench(onednn_u8)
    r['onednn u8s8 gemm only'] = bench(onednn_gemm_only)
    err_u8 = ((onednn_u8()-ref).norm()/ref.norm()).item()
    try:
        def onednn_s8():
            q,s,zp = qx_s8(x)
            return torch.ops.onednn.qlinear_pointwise(q,s,zp,qw,ws,wzp,b,1.0,0,torch.float32,'none',[],'')
        r['onednn s8s8 (+quant)'] = bench(onednn_s8)
        err_s8 = ((onednn_s8()-ref).norm()/ref.norm()).item()
    except Exception as e:
        err_s8 = str(e)[:100]
    WqT = Wq.t().contiguous()
    def intmm():
        q,s,_ = qx_s8(x)
        acc = torch._int_mm(q, Wq.t())
        return acc.float()*(s*ws) + b
    try:
        r['_int_mm s8s8'] = bench(intmm, n=3); err_im = ((intmm()-ref).norm()/ref.norm()).item()
    except Exception as e: err_im=str(e)[:100]
    torch.backends.quantized.engine='fbgemm'
    wq_t = torch.quantize_per_channel(W, ws.double(), torch.zeros(N,dtype=torch.long), 0, torch.qint8)
    pp = torch.ops.quantized.linear_prepack(wq_t, b)
    r['fbgemm dynamic rr'] = bench(lambda: torch.ops.quantized.linear_dynamic(x, pp, True))
    r['fbgemm dynamic'] = bench(lambda: torch.ops.quantized.linear_dynamic(x, pp, False))
    err_fb = ((torch.ops.quantized.linear_dynamic(x, pp, True)-ref).norm()/ref.norm()).item()
    print(M,K,N, ' '.join(f'{k}={v:.3f}ms' for k,v in r.items()))
    print('   relL2 u8', err_u8, 's8', err_s8, 'int_mm', err_im, 'fbgemm rr', err_fb)
