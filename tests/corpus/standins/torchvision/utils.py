"""``save_image``: writes the batch's shape and range to the file (no image library needed). ``make_grid``:
torchvision's tiling of a batch into one (3, H, W) image, ``padding`` pixels of ``pad_value`` between."""
import math

import torch


def save_image(tensor, fp, nrow=8, normalize=False, **kwargs):
    with open(fp, "w") as f:
        f.write(f"{tuple(tensor.shape)} {float(tensor.min()):.3f} {float(tensor.max()):.3f}\n")


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    if isinstance(tensor, list):
        tensor = torch.stack(tensor, dim=0)
    if tensor.dim() == 3:
        tensor = tensor.unsqueeze(0)
    if tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = tensor.size(2) + padding, tensor.size(3) + padding
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value)
    for k in range(nmaps):
        y, x = divmod(k, xmaps)
        grid[:, y * height + padding:(y + 1) * height, x * width + padding:(x + 1) * width] = tensor[k]
    return grid
