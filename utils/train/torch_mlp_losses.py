"""PyTorch's loss curves for test/Training/train-mlp.test (needs torch).

Run in a folder holding Inputs/mlp.onnxtxt's batches as cgc-interp saves
them (`cgc-interp mlp.onnxtxt --train --save-inputs in`, and with
`--loss=cross_entropy --save-inputs inc`) and cgc's losses (cgc_adam.txt,
cgc_sgd.txt, cgc_ce.txt: `cgc-interp ... --steps 5`); prints the largest
relative difference per optimizer and torch's losses.
"""
import numpy as np, torch, onnx, onnx.numpy_helper as nh
from onnx import parser
m = parser.parse_model(open('mlp.onnxtxt').read())
W = {i.name: torch.tensor(nh.to_array(i).copy(), requires_grad=True) for i in m.graph.initializer}
def fwd(x):
    h = torch.relu(x @ W['w1'] + W['b1']); return h @ W['w2'] + W['b2']
def run(opt, lossf, d, steps=5):
    for k in W: pass
    x = torch.tensor(np.load(d+'/x.npy')); lab = torch.tensor(np.load(d+'/label.npy'))
    out=[]
    for s in range(steps):
        opt.zero_grad(); l = lossf(fwd(x), lab); l.backward(); opt.step(); out.append(l.item())
    return out
import copy, sys
init = {k: v.detach().clone() for k,v in W.items()}
def reset():
    for k in W: W[k].data.copy_(init[k])
reset(); a = run(torch.optim.AdamW(W.values(), lr=0.05, weight_decay=0.1), torch.nn.functional.mse_loss, 'in')
reset(); b = run(torch.optim.SGD(W.values(), lr=0.1, momentum=0.9, weight_decay=0.01), torch.nn.functional.mse_loss, 'in')
reset(); c = run(torch.optim.SGD(W.values(), lr=0.5), torch.nn.functional.cross_entropy, 'inc')
for name, t, f in [('adam',a,'cgc_adam.txt'),('sgd',b,'cgc_sgd.txt'),('ce',c,'cgc_ce.txt')]:
    g=[float(l.split('=')[1]) for l in open(f)]
    print(name, max(abs(x-y)/abs(y) for x,y in zip(g,t)), t)
